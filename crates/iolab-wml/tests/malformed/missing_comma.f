# expect: 6:40 expected `flowop` or `}` in `thread`, found `fd`
# hint: is a `,` missing before `fd`?
define file name=f1,path=/tmp,size=1m
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1 fd=1
  }
}
