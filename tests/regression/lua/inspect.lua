-- @inspectFile: main(value) for each value (here each uploaded file's
-- temporary name). nil passes; a string rejects, and is the message.
function main(tmpname)
    if type(tmpname) ~= "string" or tmpname == "" then
        return nil
    end
    local name = m.getvar("FILES")
    if name ~= nil and string.find(name, "^eicar") then
        return "rejected " .. name
    end
    return nil
end
