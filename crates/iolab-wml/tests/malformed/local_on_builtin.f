# expect: 5:41 `$xx=` arguments only apply to composite flowops
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1, $xx=1
  }
}
