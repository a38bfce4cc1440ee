# iolab workload: a mail server (the shape of filebench's "varmail" personality).
#
# 16 delivery/reader threads share one flat directory of 1000 small mail files (gamma sizes
# around 16 KiB). Each loop deletes a message, delivers a new one (create, append, fsync),
# then reads a message, appends to it and fsyncs, and reads another one. fsync-heavy: on a
# real device this measures journal commits more than bandwidth.
#
# filebench aborts this workload with no results when a thread cannot find a file to delete
# (another thread has it open); iolab picks another file and counts the miss.

set $dir=/tmp
set $nfiles=1000
set $dirwidth=1000000
set $filesize=cvar(type=cvar-gamma,parameters="mean:16384;gamma:1.5")
set $nthreads=16
set $iosize=1m
set $appendsize=16k
set $runtime=60

define fileset name=mailbox,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc=80

define process name=mailserver,instances=1
{
  thread name=mailer,memsize=10m,instances=$nthreads
  {
    flowop deletefile name=expunge,filesetname=mailbox
    flowop createfile name=deliver-create,filesetname=mailbox,fd=1
    flowop appendfilerand name=deliver-append,iosize=$appendsize,fd=1
    flowop fsync name=deliver-fsync,fd=1
    flowop closefile name=deliver-close,fd=1
    flowop openfile name=reply-open,filesetname=mailbox,fd=1
    flowop readwholefile name=reply-read,fd=1,iosize=$iosize
    flowop appendfilerand name=reply-append,iosize=$appendsize,fd=1
    flowop fsync name=reply-fsync,fd=1
    flowop closefile name=reply-close,fd=1
    flowop openfile name=read-open,filesetname=mailbox,fd=1
    flowop readwholefile name=read,fd=1,iosize=$iosize
    flowop closefile name=read-close,fd=1
  }
}

run $runtime
