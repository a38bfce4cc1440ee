# expect: 3:38 arithmetic in the value of `size`
# hint: then write `size=$x`
define file name=f1,path=/tmp,size=1m*2
define process name=p { thread name=t { flowop hog name=h } }
run 1
