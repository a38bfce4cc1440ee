# expect: 6:4 missing `}` to close `define process`
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1
  }
