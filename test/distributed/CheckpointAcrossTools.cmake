# A consolidated checkpoint written by two ranks of `tessel-bench shard --sharding fsdp`
# (Gloo) starts the single-process `tessel-bench model`: the parameters it loads sum to the
# saving run's param_checksum, to the last bit (both add the same f32 values in f64 in
# the same order). Arguments: -DRUN=tessel-run -DBENCH=tessel-bench -DDIR=scratch dir.
set(model --model small --d-model 64 --d-ff 128 --num-layers 2 --num-heads 2 --vocab-size 256
          --context-length 16)
file(MAKE_DIRECTORY ${DIR})
execute_process(
  COMMAND ${RUN} -n 2 -- ${BENCH} shard ${model} --batch-size 4 --warmup 1 --steps 2
          --backend gloo --sharding fsdp --save-checkpoint ${DIR}/fsdp.pt --json ${DIR}/shard.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-bench shard failed (${rc}):\n${out}${err}")
endif()
execute_process(
  COMMAND ${BENCH} model --device cpu ${model} --steps 1 --warmup 0 --quiet
          --init-checkpoint ${DIR}/fsdp.pt --json ${DIR}/model.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-bench model --init-checkpoint failed (${rc}):\n${out}${err}")
endif()
file(READ ${DIR}/shard.json shard)
file(READ ${DIR}/model.json model)
string(JSON saved GET "${shard}" results 0 param_checksum)
string(JSON loaded GET "${model}" results 0 init_param_checksum)
if(NOT saved STREQUAL loaded)
  message(FATAL_ERROR "saved parameters sum to ${saved}, loaded ones to ${loaded}")
endif()
message(STATUS "checkpoint round trip: checksum ${saved} saved and loaded")
