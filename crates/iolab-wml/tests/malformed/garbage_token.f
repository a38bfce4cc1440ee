# expect: 3:55 unexpected character `@`
set $dir=/tmp
define fileset name=a,path=$dir,entries=10,dirwidth=5 @
