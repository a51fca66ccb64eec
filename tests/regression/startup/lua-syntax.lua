-- A syntax error on line 4: the function is never closed.
function main()
    if m.getvar("ARGS.a") then
        return "a"
