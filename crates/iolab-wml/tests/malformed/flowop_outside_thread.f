# expect: 4:3 expected `thread` or `}` in `define process`, found `flowop`
define file name=f1,path=/tmp,size=1m
define process name=p {
  flowop read name=r1,filesetname=f1
}
