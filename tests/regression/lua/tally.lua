-- exec: run on a match, its result ignored. Counts its own runs in TX.
function main()
    -- (mod_security2 returns no value at all for a missing variable)
    local v = m.getvar("TX.lua_runs")
    local n = tonumber(v or "0")
    m.setvar("tx.lua_runs", n + 1)
    return "ignored"
end
