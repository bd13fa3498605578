import { ApiClient, type CallOptions, type ConnectionOptions } from "./client.js";
import type { CreatePoolRequest, Pool, UpdatePoolRequest } from "./types.js";

type Options = ConnectionOptions & CallOptions;

const path = (name: string) => "/v1/pools/" + encodeURIComponent(name);

/**
 * Warm pools: started sandboxes of one template kept ready. `Sandbox.create`
 * with a matching spec, or with `pool: name`, takes one in milliseconds.
 */
export const Pools = {
  /** create makes a pool that keeps `min` instances ready (up to `max` after bursts). */
  async create(req: CreatePoolRequest, opts: Options = {}): Promise<Pool> {
    return new ApiClient(opts).json<Pool>("POST", "/v1/pools", { json: req, ...opts });
  },
  /** list returns the team's pools with how many instances are ready. */
  async list(opts: Options = {}): Promise<Pool[]> {
    return new ApiClient(opts).json<Pool[]>("GET", "/v1/pools", opts);
  },
  async get(name: string, opts: Options = {}): Promise<Pool> {
    return new ApiClient(opts).json<Pool>("GET", path(name), opts);
  },
  /** update resizes a pool; ready instances past a smaller max are deleted. */
  async update(name: string, req: UpdatePoolRequest, opts: Options = {}): Promise<Pool> {
    return new ApiClient(opts).json<Pool>("PATCH", path(name), { json: req, ...opts });
  },
  /** delete deletes a pool and the instances waiting in it; adopted sandboxes stay. */
  async delete(name: string, opts: Options = {}): Promise<void> {
    await new ApiClient(opts).request("DELETE", path(name), opts);
  },
};
