"""Global arrays <-> per-rank slices for per-rank (shard_map) programs.

A .brtx compiled from a `jax.shard_map` program keeps its device mesh and,
per argument and result, which mesh axes each dimension is split over
(`Session.functions[i]["mesh"]`, `["arguments"][j]["sharding"]`). Rank r sits
at the row-major position r of the mesh, as JAX numbers a mesh's devices.

    s = brt.Session("tp_mlp.brtx")          # under mpirun: rank from the env
    f = s.functions[0]
    x_local = brt.distributed.shard(x, f, "x", s.rank)   # the argument named after parameter x
    (y_local,) = s.run(x_local)
    # every rank's y_local, gathered somehow -> brt.distributed.unshard(...)
"""
import numpy as np


def _argument(function, name):
    for a in function["arguments"]:
        if a["name"] == name:
            return a
    names = ", ".join(a["name"] for a in function["arguments"])
    raise KeyError(f"function '{function['name']}' has no argument '{name}' (it has: {names})")


def _coordinates(mesh, rank):
    """The rank's position on each mesh axis (row-major over the mesh)."""
    coords = {}
    for axis, size in reversed(mesh):
        coords[axis] = rank % size
        rank //= size
    return coords


def _slices(shape, sharding, mesh, rank):
    sizes = dict(mesh)
    coords = _coordinates(mesh, rank)
    out = []
    for extent, axes in zip(shape, sharding):
        pieces, index = 1, 0
        for axis in filter(None, axes.split(",")):
            pieces *= sizes[axis]
            index = index * sizes[axis] + coords[axis]
        if extent % pieces:
            raise ValueError(f"dimension of size {extent} does not split into {pieces} pieces")
        step = extent // pieces
        out.append(slice(index * step, (index + 1) * step))
    return tuple(out)


def shard(global_array, function, argument, rank):
    """This rank's slice of `global_array` for `argument` of `function` (a
    dict from Session.functions)."""
    arg = _argument(function, argument)
    sharding = arg.get("sharding")
    if sharding is None:
        return np.ascontiguousarray(global_array)
    global_array = np.asarray(global_array)
    if global_array.ndim != len(sharding):
        raise ValueError(f"'{argument}' has rank {len(sharding)}, the array has {global_array.ndim}")
    return np.ascontiguousarray(global_array[_slices(global_array.shape, sharding, function["mesh"], rank)])


def unshard(local_arrays, function, argument):
    """The global array of `argument` (a result, say) from every rank's slice,
    indexed by rank."""
    arg = _argument(function, argument)
    sharding = arg.get("sharding")
    if sharding is None:
        return np.asarray(local_arrays[0])
    mesh = function["mesh"]
    sizes = dict(mesh)
    shape = list(np.shape(local_arrays[0]))
    for d, axes in enumerate(sharding):
        for axis in filter(None, axes.split(",")):
            shape[d] *= sizes[axis]
    out = np.empty(shape, dtype=np.asarray(local_arrays[0]).dtype)
    for rank, local in enumerate(local_arrays):
        out[_slices(shape, sharding, mesh, rank)] = local
    return out
