module bulwark.invalid/tools/crs/export

go 1.23

require github.com/corazawaf/coraza-coreruleset/v4 v4.25.0

require github.com/magefile/mage v1.17.0 // indirect
