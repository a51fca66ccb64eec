-- Allocates without end: every string twice the one before, all kept.
function main()
    if m.getvar("ARGS.hog") == nil then
        return nil
    end
    local kept, s = {}, "x"
    while true do
        s = s .. s
        kept[#kept + 1] = s
    end
end
