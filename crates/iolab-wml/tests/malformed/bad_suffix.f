# expect: 3:15 bad number `16q`: unknown suffix `q`
set $dir=/tmp
set $filesize=16q
