# iolab workload: a web server (the shape of filebench's "webserver" personality).
#
# 100 threads serve pages: each loop reads ten whole files (gamma sizes around 16 KiB) from a
# read-only document tree and appends one record to a shared access log. The ten reads are a
# composite flowop, so they are reported once ("open", "read", "close") instead of ten times.

set $dir=/tmp
set $nfiles=1000
set $dirwidth=20
set $filesize=cvar(type=cvar-gamma,parameters="mean:16384;gamma:1.5")
set $nthreads=100
set $instances=1
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

define process name=httpd,instances=$instances
{
  thread name=worker,memsize=10m,instances=$nthreads
  {
    flowop serve-page name=pages,iters=10
    flowop appendfilerand name=access-log,filesetname=logs,iosize=$logsize,fd=2
  }
}

run $runtime
