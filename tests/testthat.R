library(testthat)
library(gamgpu)

test_check("gamgpu")
