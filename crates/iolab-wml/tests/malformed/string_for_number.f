# expect: 6:47 expected a number for `iosize`, found `$dir` (= "/tmp")
set $dir=/tmp
define file name=f1,path=$dir,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,iosize=$dir
  }
}
