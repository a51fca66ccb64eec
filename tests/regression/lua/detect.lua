-- SecRuleScript: a match is the string main() returns. Reads one argument
-- through two transformations, as m.getvar's manual example does.
function main()
    local q = m.getvar("ARGS.q", { "lowercase", "compressWhitespace" })
    if q == nil then
        return nil
    end
    if string.find(q, "evil thing", 1, true) then
        return "evil thing in ARGS:q"
    end
    return nil
end
