# iolab workload: the video server of seed report 000 (ext4 journal modes in a VM).
#
# The report shrank the videos to 200 MiB and their numbers to 10 active and 10 passive (about
# 4 GiB) to fit its 5 GiB partition; everything else is the videoserver workload:
#
# 48 reader threads stream active videos sequentially in 256 KiB reads, together limited to
# $eventrate MiB/s; one writer replaces a passive video every $repintval seconds (delete,
# create, write it whole in 1 MiB writes). Here the videos are 200 MiB each.

set $dir=/tmp
set $eventrate=96
set $filesize=200m
set $nthreads=48
set $numactivevids=10
set $numpassivevids=10
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
