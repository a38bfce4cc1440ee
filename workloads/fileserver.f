# iolab workload: a file server (the shape of filebench's "fileserver" personality).
#
# 50 clients each loop over: create a file and write it whole, append to a file, read a
# file whole, delete a file, stat a file. Files have gamma-distributed sizes around 128 KiB;
# 80% of them exist when the run starts so that creates and deletes both find work.
#
#   iolab run fileserver --dir /mnt/test --time 60s
#   iolab run fileserver --dir /mnt/test --set nfiles=50000 --set nthreads=16

set $dir=/tmp
set $nfiles=10000
set $dirwidth=20
set $filesize=cvar(type=cvar-gamma,parameters="mean:131072;gamma:1.5")
set $nthreads=50
set $iosize=1m
set $appendsize=16k
set $runtime=60

define fileset name=files,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc=80

define process name=server,instances=1
{
  thread name=client,memsize=10m,instances=$nthreads
  {
    flowop createfile name=create,filesetname=files,fd=1
    flowop writewholefile name=write-whole,srcfd=1,fd=1,iosize=$iosize
    flowop closefile name=close-new,fd=1
    flowop openfile name=open-append,filesetname=files,fd=1
    flowop appendfilerand name=append,iosize=$appendsize,fd=1
    flowop closefile name=close-appended,fd=1
    flowop openfile name=open-read,filesetname=files,fd=1
    flowop readwholefile name=read-whole,fd=1,iosize=$iosize
    flowop closefile name=close-read,fd=1
    flowop deletefile name=delete,filesetname=files
    flowop statfile name=stat,filesetname=files
  }
}

run $runtime
