# iolab workload: the OLTP database of seed report 000 (ext4 journal modes in a VM).
#
# The report grew the data files to 200 MiB and their number to 20 (about 4 GiB) to fill its
# 5 GiB partition; everything else is the oltp workload:
#
# 200 shadow processes do random 2 KiB reads of the data files and burn CPU between them;
# 10 database writers do batches of 100 random asynchronous 2 KiB writes; one log writer
# does 256 KiB asynchronous log writes. Semaphores tie the writers to the readers' progress.
# Everything here runs as threads of one iolab process.

set $dir=/tmp
set $runtime=60
set $eventrate=0
set $iosize=2k
set $nshadows=200
set $ndbwriters=10
set $usermode=200000
set $filesize=200m
set $nfiles=20
set $logfilesize=10m
set $nlogfiles=1
set $memperthread=1m
set $workingset=0
set $directio=0

eventgen rate=$eventrate

define fileset name=datafiles,path=$dir,size=$filesize,entries=$nfiles,dirwidth=1024,prealloc=100,reuse
define fileset name=logfile,path=$dir,size=$logfilesize,entries=$nlogfiles,dirwidth=1024,prealloc=100,reuse

define process name=lgwr,instances=1
{
  thread name=lgwr,memsize=$memperthread
  {
    flowop aiowrite name=log-write,filesetname=logfile,iosize=256k,random,directio=$directio,dsync
    flowop aiowait name=log-wait
    flowop semblock name=log-block,value=3200,highwater=1000
  }
}

define process name=dbwr,instances=$ndbwriters
{
  thread name=dbwr,memsize=$memperthread
  {
    flowop aiowrite name=db-write,filesetname=datafiles,iosize=$iosize,workingset=$workingset,random,iters=100,opennext,directio=$directio,dsync
    flowop hog name=db-cpu,value=10000
    flowop semblock name=db-block,value=1000,highwater=2000
    flowop aiowait name=db-wait
  }
}

define process name=shadow,instances=$nshadows
{
  thread name=shadow,memsize=$memperthread
  {
    flowop read name=shadow-read,filesetname=datafiles,iosize=$iosize,workingset=$workingset,random,opennext,directio=$directio
    flowop hog name=shadow-cpu,value=$usermode
    flowop sempost name=wake-log,value=1,target=log-block,blocking
    flowop sempost name=wake-db,value=1,target=db-block,blocking
    flowop eventlimit name=pace
  }
}

run $runtime
