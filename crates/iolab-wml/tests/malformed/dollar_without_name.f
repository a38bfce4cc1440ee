# expect: 2:5 expected a variable name after `$`
set $ = 5
