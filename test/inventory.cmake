# Node pools, quota against capacity and the queue graph (lib/inventory, lib/model/node.c), and
# the `sluice inventory` and `sluice graph` commands.
sluice_add_test(inventory LIBS sluice_inventory)
sluice_add_test(inventory_cmd LIBS PkgConfig::JANSSON SOURCES sluice_exec.c)
add_dependencies(test_inventory_cmd sluice)
sluice_add_fuzz(node LIBS sluice_inventory)
sluice_add_test(graph LIBS sluice_graph)
# Live: both commands against the test API server (examples/platform on examples/nodes.yaml).
if(COMMAND sluice_add_integration)
  sluice_add_integration(inventory_live)
endif()
