# iolab workload: a caching web proxy (the shape of filebench's "webproxy" personality).
#
# 100 threads: each loop evicts an object (delete), stores a new one (create, append), and
# serves five cached objects (read whole). A flat directory of 10000 objects of 16 KiB.
# An opslimit at the end paces the loop when an event rate is set (--set eventrate=N).

set $dir=/tmp
set $nfiles=10000
set $dirwidth=1000000
set $filesize=16k
set $nthreads=100
set $appendsize=16k
set $iosize=1m
set $eventrate=0
set $runtime=60

eventgen rate=$eventrate

define fileset name=cache,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc=80

define flowop name=hit
{
  flowop openfile name=hit-open,filesetname=cache,fd=1
  flowop readwholefile name=hit-read,fd=1,iosize=$iosize
  flowop closefile name=hit-close,fd=1
}

define process name=proxy,instances=1
{
  thread name=proxy-worker,memsize=10m,instances=$nthreads
  {
    flowop deletefile name=evict,filesetname=cache
    flowop createfile name=store-create,filesetname=cache,fd=1
    flowop appendfilerand name=store-append,iosize=$appendsize,fd=1
    flowop closefile name=store-close,fd=1
    flowop hit name=hits,iters=5
    flowop opslimit name=pace
  }
}

run $runtime
