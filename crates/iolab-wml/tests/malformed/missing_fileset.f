# expect: 6:41 unknown fileset `bigfilset`
# hint: did you mean `bigfileset`?
define fileset name=bigfileset,path=/tmp,entries=10,dirwidth=5
define process name=p {
  thread name=t {
    flowop openfile name=o1,filesetname=bigfilset,fd=1
  }
}
