set $dir=/tmp
define file name=f1,path=$dir,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filename=f1,iosize=4k
  }
run 10
