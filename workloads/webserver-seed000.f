# iolab workload: the web server of seed report 000 (ext4 journal modes in a VM).
#
# The report changed filebench's webserver to pages of a "representative modern size":
# gamma-distributed around 2170552 bytes (min 512 KiB, max 30 MiB), 2400 of them (about
# 4.8 GiB), one thread per filereader instance, and compared 1 and 100 instances. iolab runs
# instances as thread groups; choose with --set instances=1 or --set instances=100.

set $dir=/tmp
set $nfiles=2400
set $dirwidth=20
set $filesize=cvar(type=cvar-gamma,parameters="mean:2170552;gamma:1.5",min=524288,max=31457280)
set $nthreads=1
set $instances=100
set $iosize=1m
set $logsize=16k
set $runtime=60

define fileset name=htdocs,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc=100,readonly
define fileset name=logs,path=$dir,size=$filesize,entries=1,dirwidth=$dirwidth,prealloc

define flowop name=serve-page
{
  flowop openfile name=open,filesetname=htdocs,fd=1
  flowop readwholefile name=read,fd=1,iosize=$iosize
  flowop closefile name=close,fd=1
}

define process name=filereader,instances=$instances
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop serve-page name=pages,iters=10
    flowop appendfilerand name=access-log,filesetname=logs,iosize=$logsize,fd=2
  }
}

run $runtime
