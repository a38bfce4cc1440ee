# UnixBench's file copy (fstime.c), in WML: read a file and write a copy of it, `bufsize`
# bytes per system call, over and over for the run's time. UnixBench's three variants are
# fsbuffer (256-byte buffer, 500 blocks), fstime (1024, 2000) and fsdisk (4096, 8000): the
# file is maxblocks × bufsize bytes. Its score is KBps copied; iolab reports both halves'
# rates (the read and the write flowops) and their latencies.
set $dir=/tmp
set $bufsize=1024
set $filesize=2000k

define fileset name=source,path=$dir,size=$filesize,entries=1,dirwidth=1,prealloc=100
define fileset name=copy,path=$dir,size=$filesize,entries=1,dirwidth=1,prealloc=100

define process name=filecopy,instances=1
{
  thread name=copier,memsize=$bufsize,instances=1
  {
    flowop openfile name=opensource,filesetname=source,fd=1
    flowop openfile name=opencopy,filesetname=copy,fd=2
    flowop readwholefile name=read,fd=1,iosize=$bufsize
    flowop writewholefile name=write,fd=2,srcfd=1,iosize=$bufsize
    flowop closefile name=closesource,fd=1
    flowop closefile name=closecopy,fd=2
  }
}

run 5
