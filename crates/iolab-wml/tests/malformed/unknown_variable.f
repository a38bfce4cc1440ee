# expect: 4:41 unknown variable `$nfile`
# hint: did you mean `$nfiles`?
set $nfiles=100
define fileset name=a,path=/tmp,entries=$nfile,dirwidth=10
