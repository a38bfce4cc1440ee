# expect: 6:3 missing `}` to close `thread`
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t1 {
    flowop read name=r1,filesetname=f1
  thread name=t2 {
    flowop read name=r2,filesetname=f1
  }
}
