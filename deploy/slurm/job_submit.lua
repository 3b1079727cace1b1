--[[
job_submit.lua: hase picks the GPU type for jobs that stay in Slurm's own queue.

For sites that keep Slurm as the scheduler. A job opts in by describing its inference work in
its comment, and by asking for an untyped GPU:

  sbatch --gres=gpu:1 --comment=hase:model=resnet50,batch_size=8,num_batches=100 job.sh

For such a job this script asks hase (`POST /v1/advise` of `hase serve --backend slurm`, which
answers the GRES of the GPU with the earliest predicted completion, e.g. "gpu:h100:1") and
rewrites the request to that type, keeping the count: gres:gpu:2 → gres:gpu:h100:2. Slurm then
places it as usual. The user's request is kept unchanged when:
  * the comment has no "hase:" part, or the job asks for a typed GPU already (gpu:t4:1);
  * hase is down, slow (more than HASE_TIMEOUT_S, default 0.5 s: slurmctld waits for this
    script), answers an error, or has no advice (e.g. unknown model);
  * a field is not a plain model name / number (nothing user-written reaches a shell).

Install: copy next to slurm.conf, set JobSubmitPlugins=lua, `scontrol reconfigure`.
Configure: HASE_ADVISE_URL in slurmctld's environment (default http://127.0.0.1:8080), or edit
the default below. Needs curl on the slurmctld host.
Tested (tests/service/slurm_e2e_test.cc, JobSubmitLua*) against slurmctld 22.05.8: hase down,
hase answering (request rewritten), a typed request left alone.
--]]

local HASE_URL = os.getenv("HASE_ADVISE_URL") or "http://127.0.0.1:8080"
local HASE_TIMEOUT_S = tonumber(os.getenv("HASE_TIMEOUT_S") or "") or 0.5

-- "hase:model=resnet50,batch_size=8" → {model="resnet50", batch_size="8"}, nil without "hase:".
local function parse_comment(comment)
  if comment == nil then return nil end
  local spec = string.match(comment, "hase:([%w%._,=%-]+)")
  if spec == nil then return nil end
  local t = {}
  for k, v in string.gmatch(spec, "([%w_]+)=([%w%._%-]+)") do t[k] = v end
  if t.model == nil then return nil end
  return t
end

-- The advise request body; nil when a field is not what it should be.
local function advise_body(t)
  if not string.match(t.model, "^[%w%._%-]+$") then return nil end
  local body = '{"model":"' .. t.model .. '"'
  for _, k in ipairs({"batch_size", "input_size", "num_batches", "samples", "priority"}) do
    if t[k] ~= nil then
      if not string.match(t[k], "^%d+$") then return nil end
      body = body .. ',"' .. k .. '":' .. t[k]
    end
  end
  return body .. "}"
end

-- hase's GRES type for the job ("h100"), nil when hase is down, slow or has no advice.
local function ask_hase(body)
  if not string.match(HASE_URL, "^https?://[%w%.%-:%[%]]+/?$") then return nil end
  -- Every interpolated value was checked against a character class above.
  local cmd = string.format("curl -s -f -m %.2f --connect-timeout %.2f -H 'Content-Type: application/json' " ..
                            "-d '%s' '%s/v1/advise' 2>/dev/null", HASE_TIMEOUT_S, HASE_TIMEOUT_S, body,
                            string.gsub(HASE_URL, "/$", ""))
  local p = io.popen(cmd)
  if p == nil then return nil end
  local answer = p:read("*a")
  p:close()
  if answer == nil then return nil end
  return string.match(answer, '"native"%s*:%s*"gpu:([%w%._%-]+):%d+"')
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local t = parse_comment(job_desc.comment)
  if t == nil then return slurm.SUCCESS end
  local tres = job_desc.tres_per_node
  if tres == nil then return slurm.SUCCESS end
  -- Only an untyped GPU request is ours to type: "gres:gpu:N" (or "gres/gpu:N").
  local sep, count = string.match(tres, "^gres([:/])gpu:(%d+)$")
  if count == nil then return slurm.SUCCESS end
  local body = advise_body(t)
  if body == nil then return slurm.SUCCESS end
  local gres_type = ask_hase(body)
  if gres_type == nil then
    slurm.log_info("hase: no advice for %s (hase down, slow or no GPU fits); keeping %s", t.model, tres)
    return slurm.SUCCESS
  end
  job_desc.tres_per_node = "gres" .. sep .. "gpu:" .. gres_type .. ":" .. count
  slurm.log_info("hase: %s → %s", tres, job_desc.tres_per_node)
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
