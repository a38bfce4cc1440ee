# expect: 3:6 unterminated string
set $dir=/tmp
echo "personality loaded
run 10
