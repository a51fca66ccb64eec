-- Never returns, and tries to survive its instruction budget with pcall.
function main()
    if m.getvar("ARGS.loop") == nil then
        return nil
    end
    while true do
        pcall(function() while true do end end)
    end
end
