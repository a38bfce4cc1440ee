# expect: 5:43 `fd` must be between 0 and 127, found 128
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,fd=128
  }
}
