-- m.getvars: every argument whose value is "bad" (after lowercase) counts;
-- the count goes to TX for a rule after this one.
function main()
    local n = 0
    for _, v in ipairs(m.getvars("ARGS", "lowercase")) do
        if v.value == "bad" and string.sub(v.name, 1, 5) == "ARGS:" then
            n = n + 1
        end
    end
    m.setvar("tx.lua_bad", n)
    return nil
end
