# expect: 5:40 `iosize` needs a value
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,iosize
  }
}
