# iolab workload: a video server (the shape of filebench's "videoserver" personality).
#
# 48 reader threads stream active videos sequentially in 256 KiB reads, together limited to
# $eventrate MiB/s; one writer replaces a passive video every $repintval seconds (delete,
# create, write it whole in 1 MiB writes). The default videos are 10 GiB each (2.2 TiB in
# all): scale with --set filesize=… --set numactivevids=… --set numpassivevids=….

set $dir=/tmp
set $eventrate=96
set $filesize=10g
set $nthreads=48
set $numactivevids=32
set $numpassivevids=194
set $reuseit=false
set $readiosize=256k
set $writeiosize=1m
set $repintval=10
set $runtime=60

eventgen rate=$eventrate

define fileset name=activevids,path=$dir,size=$filesize,entries=$numactivevids,dirwidth=4,prealloc,paralloc,reuse=$reuseit
define fileset name=passivevids,path=$dir,size=$filesize,entries=$numpassivevids,dirwidth=20,prealloc=50,paralloc,reuse=$reuseit

define process name=vidwriter,instances=1
{
  thread name=vidwriter,memsize=10m,instances=1
  {
    flowop deletefile name=retire,filesetname=passivevids
    flowop createfile name=upload-create,filesetname=passivevids,fd=1
    flowop writewholefile name=upload,iosize=$writeiosize,fd=1,srcfd=1
    flowop closefile name=upload-close,fd=1
    flowop delay name=between-uploads,value=$repintval
  }
}

define process name=vidreaders,instances=1
{
  thread name=streamer,memsize=10m,instances=$nthreads
  {
    flowop read name=stream,filesetname=activevids,iosize=$readiosize
    flowop bwlimit name=bandwidth-cap,target=stream
  }
}

run $runtime
