# expect: 7:12 unknown flowop `readwholfile`
# hint: did you mean `readwholefile`?
define file name=f1,path=/tmp,size=1m
define process name=p
{
  thread name=t {
    flowop readwholfile name=r1,filesetname=f1
  }
}
