"""Review cases for symbolic sizes: a reduce_window's static padding of -1
keeps its StableHLO meaning (one element cropped) next to the -1 entries
that mark a cumulative scan over a symbolic dimension; integer and/or of
sizes and a size converted to a boolean are followed exactly or refused;
a shape assertion on an `and` of conditions is checked at run."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import brt

RNG = np.random.default_rng(77)


def spec(shape, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def assert_matches_jax(fn, specs, args):
    got = brt.Session(brt.compile(fn, *specs)).run(*args)[0]
    want = np.asarray(jax.jit(fn)(*args), dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "padding, reducer, init",
    [(((-1, 0),), lax.add, 0.0), (((0, -1),), lax.add, 0.0), (((-1, 2),), lax.max, -np.inf)],
)
def test_static_reduce_window_padding_of_minus_one_crops(have_compiler, padding, reducer, init):
    fn = lambda x: lax.reduce_window(x, init, reducer, (2,), (1,), padding)  # noqa: E731
    assert_matches_jax(fn, [spec((6,))], (randn(6),))


def test_static_pooling_padding_of_minus_one_crops(have_compiler):
    pads = ((0, 0), (0, 0), (-1, 0), (0, -1))
    fn = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 1, 1), pads)  # noqa: E731
    assert_matches_jax(fn, [spec((2, 3, 6, 6))], (randn(2, 3, 6, 6),))


def test_symbolic_padding_of_the_extent_less_one_needs_the_whole_window(have_compiler):
    (n,) = jax.export.symbolic_shape("n")
    fn = lambda x: lax.reduce_window(x, 0.0, lax.add, (3,), (1,), ((x.shape[0] - 1, 0),))  # noqa: E731
    with pytest.raises(brt.CompileError, match=r"dynamic_reduce_window with n - 1 in its padding"):
        brt.compile(fn, spec((n,)))


def sized_iota(size_ops):
    """StableHLO whose result is an iota of a size computed from x's length
    n by `size_ops` (which read %n and define %size, an i32 scalar)."""
    return f"""
"builtin.module"() <{{sym_name = "m"}}> ({{
  "func.func"() <{{function_type = (tensor<?xf32>) -> tensor<?xf32>, sym_name = "main",
                  sym_visibility = "public"}}> ({{
  ^bb0(%x: tensor<?xf32>):
    %n = "stablehlo.get_dimension_size"(%x) <{{dimension = 0 : i64}}> : (tensor<?xf32>) -> tensor<i32>
    %one = "stablehlo.constant"() <{{value = dense<1> : tensor<i32>}}> : () -> tensor<i32>
    %five = "stablehlo.constant"() <{{value = dense<5> : tensor<i32>}}> : () -> tensor<i32>
    %six = "stablehlo.constant"() <{{value = dense<6> : tensor<i32>}}> : () -> tensor<i32>
    %seven = "stablehlo.constant"() <{{value = dense<7> : tensor<i32>}}> : () -> tensor<i32>
{size_ops}
    %r = "stablehlo.reshape"(%size) : (tensor<i32>) -> tensor<1xi32>
    %io = "stablehlo.dynamic_iota"(%r) <{{iota_dimension = 0 : i64}}> : (tensor<1xi32>) -> tensor<?xf32>
    "func.return"(%io) : (tensor<?xf32>) -> ()
  }}) : () -> ()
}}) {{jax.uses_shape_polymorphism = true}} : () -> ()
"""


def test_select_on_a_size_converted_to_a_boolean(have_compiler):
    """convert(n - 1) to i1 is n - 1 != 0: the select takes 5 for every n > 1."""
    ops = """
    %m = "stablehlo.subtract"(%n, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %p = "stablehlo.convert"(%m) : (tensor<i32>) -> tensor<i1>
    %size = "stablehlo.select"(%p, %five, %seven) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>"""
    session = brt.Session(brt.compile_stablehlo(sized_iota(ops)))
    for n in (1, 2, 3, 6):
        (got,) = session.run(randn(n))
        np.testing.assert_array_equal(got, np.arange(5 if n - 1 != 0 else 7, dtype=np.float32))


@pytest.mark.parametrize("kind", ["and", "or"])
def test_bitwise_and_or_of_a_size_is_refused(have_compiler, kind):
    """n & 6 and n | 6 are no min or max of the sizes (5 & 6 is 4)."""
    ops = f"""
    %size = "stablehlo.{kind}"(%n, %six) : (tensor<i32>, tensor<i32>) -> tensor<i32>"""
    with pytest.raises(brt.CompileError, match=kind + r" of integer sizes"):
        brt.compile_stablehlo(sized_iota(ops))


def test_bitwise_and_or_of_constant_sizes_fold_exactly(have_compiler):
    """6 & 5 is 4 and 6 | 1 is 7: the iota's length, whatever n is."""
    ops = """
    %a = "stablehlo.and"(%six, %five) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %b = "stablehlo.or"(%six, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c = "stablehlo.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %size = "stablehlo.add"(%c, %n) : (tensor<i32>, tensor<i32>) -> tensor<i32>"""
    session = brt.Session(brt.compile_stablehlo(sized_iota(ops)))
    for n in (1, 4):
        (got,) = session.run(randn(n))
        np.testing.assert_array_equal(got, np.arange(4 + 7 + n, dtype=np.float32))


def test_shape_assertion_on_an_and_of_conditions_is_checked(have_compiler):
    """A shape_assertion of (n >= 3 and n <= 10), which no bound decides:
    a run at n outside [3, 10] fails naming it; inside, the iota of n runs."""
    ops = """
    %three = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %ten = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %ge = "stablehlo.compare"(%n, %three) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %le = "stablehlo.compare"(%n, %ten) <{comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %both = "stablehlo.and"(%ge, %le) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    "stablehlo.custom_call"(%both) <{call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "n in [3, 10]"} : (tensor<i1>) -> ()
    %size = "stablehlo.add"(%n, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>"""
    session = brt.Session(brt.compile_stablehlo(sized_iota(ops)))
    for n in (3, 10):
        (got,) = session.run(randn(n))
        np.testing.assert_array_equal(got, np.arange(n + 1, dtype=np.float32))
    for n in (2, 11):
        with pytest.raises(ValueError, match=r"shape constraint .* == 1' does not hold"):
            session.run(randn(n))
