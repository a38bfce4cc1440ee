# expect: 5:49 expected `true` or `false` for `directio`, found `maybe`
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,directio=maybe
  }
}
