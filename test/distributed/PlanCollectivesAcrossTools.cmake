# tessel-bench shard --plan --plan-allreduce on two Gloo ranks: the collectives the harness
# issued in its last step are counted and issued again on their own ("alone"), and the
# count is tessel-plan's (DDP: one a bucket; FSDP: 3 U - 1; ZeRO-1: one a bucket and one a
# gather group, plus the all-reduce of the flags that finds parameters with no gradient on
# any rank, which the plan does not price). Arguments: -DRUN -DBENCH -DDIR -DALLREDUCE=json.
file(MAKE_DIRECTORY ${DIR})
execute_process(
  COMMAND ${RUN} -n 2 -- ${BENCH} shard --model small --d-model 64 --d-ff 128 --num-layers 2
          --num-heads 2 --vocab-size 256 --context-length 16 --batch-size 4 --warmup 1 --steps 2
          --backend gloo --precision fp32 --sharding none,zero1,fsdp --plan
          --plan-allreduce ${ALLREDUCE} --json ${DIR}/shard.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-bench shard failed (${rc}):\n${out}${err}")
endif()
file(READ ${DIR}/shard.json json)
set(extra_none 0)
set(extra_zero1 1)
set(extra_fsdp 0)
foreach(row 0 1 2)
  string(JSON variant GET "${json}" results ${row} variant)
  string(JSON issued GET "${json}" results ${row} collectives)
  string(JSON planned GET "${json}" results ${row} plan_collectives)
  string(JSON alone GET "${json}" results ${row} comm_alone_ms)
  math(EXPR expected "${planned} + ${extra_${variant}}")
  if(NOT issued EQUAL expected OR issued LESS 1)
    message(FATAL_ERROR "${variant}: ${issued} collectives issued, tessel-plan counts ${planned}")
  endif()
  if(NOT alone GREATER 0)
    message(FATAL_ERROR "${variant}: the collectives alone took '${alone}' ms")
  endif()
  message(STATUS "${variant}: ${issued} collectives (plan ${planned}), ${alone} ms alone")
endforeach()
