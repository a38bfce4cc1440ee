# expect: 3:8 unknown definition `define filesett`
# hint: did you mean `fileset`?
define filesett name=a,path=/tmp
