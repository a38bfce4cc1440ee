# expect: 3:15 expected `timeout`, `alldone` or `firstdone` after `set mode quit`
# hint: did you mean `alldone`?
set mode quit alldon
