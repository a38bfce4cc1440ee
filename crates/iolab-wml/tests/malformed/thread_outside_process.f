# expect: 3:1 `thread` outside `define process`
define file name=f1,path=/tmp,size=1m
thread name=t {
  flowop read name=r1,filesetname=f1
}
