# expect: 5:47 `randvar(…)` can only be assigned to a variable
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,iosize=randvar(type=uniform,min=1k,mean=4k)
  }
}
