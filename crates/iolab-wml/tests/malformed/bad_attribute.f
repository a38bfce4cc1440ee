# expect: 3:55 unknown attribute `sizee` for `define fileset`
# hint: did you mean `size`?
define fileset name=a,path=/tmp,entries=10,dirwidth=5,sizee=1k
