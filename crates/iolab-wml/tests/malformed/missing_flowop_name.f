# expect: 5:12 flowop `read` needs `name`
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read filesetname=f1,iosize=4k
  }
}
