# tessel-bench shard on two Gloo ranks, fp32: DDP (its model built whole on each rank) and
# FSDP (built on the meta device, initialised unit by unit in host memory) start from the
# same weights and take the same steps, so their last losses and parameter checksums agree
# to the bit. Arguments: -DRUN=tessel-run -DBENCH=tessel-bench -DDIR=scratch dir, and
# -DEXTRA=more;model;flags (a ;-list, e.g. grouped-query attention and a window).
file(MAKE_DIRECTORY ${DIR})
execute_process(
  COMMAND ${RUN} -n 2 -- ${BENCH} shard --model small --d-model 64 --d-ff 128 --num-layers 2
          --num-heads 2 --vocab-size 256 --context-length 16 --batch-size 4 --warmup 1 --steps 2
          --backend gloo --precision fp32 --sharding none,fsdp --json ${DIR}/shard.json ${EXTRA}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-bench shard failed (${rc}):\n${out}${err}")
endif()
file(READ ${DIR}/shard.json json)
foreach(field param_checksum loss_last)
  string(JSON ddp GET "${json}" results 0 ${field})
  string(JSON fsdp GET "${json}" results 1 ${field})
  if(NOT ddp STREQUAL fsdp)
    message(FATAL_ERROR "${field}: DDP ${ddp}, FSDP ${fsdp}")
  endif()
  message(STATUS "${field}: ${ddp} for both")
endforeach()
