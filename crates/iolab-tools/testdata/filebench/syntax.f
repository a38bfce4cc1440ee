set $dir=/tmp/classic-cap/fb
define file name=f1,path=$dir,size=1m,prealloc
define process name=p,instances=1
{
  thread name=t,memsize=1m,instances=1
  {
    flowop read name=r1,filename=f1,iosize=4k,randomm
  }
}
run 2
