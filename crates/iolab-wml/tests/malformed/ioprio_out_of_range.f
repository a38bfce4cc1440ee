# expect: 4:24 `ioprio` must be between 0 and 7, found 9
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t,ioprio=9 {
    flowop read name=r1,filesetname=f1
  }
}
