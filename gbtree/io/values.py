"""The values of a model document to and from what a file holds: JSON values (floats
written with ``repr``, non-finite ones as strings, so every value reads back to the
same bits) or raw little-endian arrays (the binary encoding's zip members), and
back, refusing anything the encoder would not have written."""
import math
import struct

import numpy as np

# dtypes an array of a model file may have (little-endian)
_DTYPES = {np.dtype(t).str: np.dtype(t) for t in (
    "<f8", "<f4", "<i8", "<i4", "<i2", "i1", "<u8", "<u4", "<u2", "u1", "?")}
_CANONICAL_NAN = np.array(np.nan).view(np.uint64).item()
_MAX_NESTING = 64


class Unsaved(Exception):
    """A value that is code or an object, not data: it has no place in a model file."""


def bad(field, msg):
    return ValueError(f"invalid model: {field}: {msg}")


# ---------------------------------------------------------------------- values <-> JSON
def _float_token(x):
    """A float as JSON: the number (``repr`` reads back exactly), or a string for
    the non-finite ones ("nan:0x..." for a NaN with other bits than NumPy's)."""
    if math.isfinite(x):
        return x
    if x != x:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        return "nan" if bits == _CANONICAL_NAN else f"nan:{bits:#018x}"
    return "inf" if x > 0 else "-inf"


def _token_float(tok, field):
    if isinstance(tok, bool) or not isinstance(tok, (int, float, str)):
        raise bad(field, f"expected a number, got {type(tok).__name__}")
    if isinstance(tok, (int, float)) or tok in ("inf", "-inf", "nan"):
        return float(tok)
    if tok.startswith("nan:0x") and len(tok) == 22:
        try:
            bits = int(tok[4:], 16)
        except ValueError:
            bits = None
        value = None if bits is None else struct.unpack("<d", struct.pack("<Q", bits))[0]
        if value is not None and value != value:
            return value
    raise bad(field, f"expected a number, got the string {tok[:40]!r}")


class Encoder:
    """Values to the document: ``mode`` "json" (arrays inline), "binary" (arrays to
    ``members``) or "pickle" (values kept as they are)."""

    def __init__(self, mode):
        self.mode = mode
        self.members = {}

    def __call__(self, v, field):
        if self.mode == "pickle":
            return v
        return self._enc(v, field)

    def _enc(self, v, field):
        if v is None or isinstance(v, (bool, str, int)):
            return v
        if isinstance(v, float):
            tok = _float_token(v)
            return tok if isinstance(tok, float) else {"$float": tok}
        if isinstance(v, np.ndarray):
            return self._array(v, field)
        if isinstance(v, np.generic) and v.dtype.kind in "biufU":
            return {"$scalar": [v.dtype.str, self._enc(v.item(), field)]}
        if isinstance(v, list):
            return [self._enc(x, field) for x in v]
        if isinstance(v, tuple):
            return {"$tuple": [self._enc(x, field) for x in v]}
        if isinstance(v, dict):
            return {"$dict": [[self._enc(k, field), self._enc(x, field)] for k, x in v.items()]}
        if isinstance(v, np.random.RandomState):
            return {"$random_state": self._enc(v.get_state(legacy=True), field)}
        raise Unsaved(f"{field}: a {type(v).__name__} is not data")

    def _array(self, a, field):
        if a.dtype.kind in "OU":
            return {"$objects": {"dtype": "object" if a.dtype.kind == "O" else a.dtype.str,
                                 "shape": list(a.shape),
                                 "values": [self._enc(x, field) for x in a.ravel().tolist()]}}
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        if a.dtype.str not in _DTYPES:
            raise Unsaved(f"{field}: arrays of dtype {a.dtype} are not saved")
        spec = {"dtype": a.dtype.str, "shape": list(a.shape)}
        if self.mode == "binary":
            spec["member"] = name = f"arrays/{len(self.members)}"
            self.members[name] = a
        else:
            data = a.ravel().tolist()
            if a.dtype.kind == "f":
                for i in np.flatnonzero(~np.isfinite(a.ravel())):
                    data[i] = _float_token(float(a.flat[i]))
            spec["data"] = data
        return {"$array": spec}


class Decoder:
    """The document's values back to Python: the inverse of ``Encoder``, refusing
    anything it would not have written (ValueError naming the field)."""

    def __init__(self, mode, members=None, limit=0):
        self.mode = mode
        self.members = members      # {name: bytes} of a binary file
        self.limit = limit          # largest array (bytes) the file can hold

    def __call__(self, v, field):
        if self.mode == "pickle":
            return v
        return self._dec(v, field, 0)

    def _dec(self, v, field, depth):
        if depth > _MAX_NESTING:
            raise bad(field, "nested too deeply")
        if v is None or isinstance(v, (bool, str, int, float)):
            return v
        if isinstance(v, list):
            return [self._dec(x, field, depth + 1) for x in v]
        if not isinstance(v, dict) or len(v) != 1:
            raise bad(field, f"unexpected {type(v).__name__}")
        (tag, body), = v.items()
        if tag == "$float":
            if not isinstance(body, str):
                raise bad(field, "$float must hold a string")
            return _token_float(body, field)
        if tag == "$tuple":
            if not isinstance(body, list):
                raise bad(field, "$tuple must hold a list")
            return tuple(self._dec(body, field, depth + 1))
        if tag == "$dict":
            if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2
                                                     for p in body):
                raise bad(field, "$dict must hold a list of [key, value] pairs")
            out = {}
            for k, x in body:
                k = self._dec(k, field, depth + 1)
                try:
                    out[k] = self._dec(x, field, depth + 1)
                except TypeError:
                    raise bad(field, f"a key of type {type(k).__name__}") from None
            return out
        if tag == "$scalar":
            if not (isinstance(body, list) and len(body) == 2 and isinstance(body[0], str)):
                raise bad(field, "$scalar must hold [dtype, value]")
            dtype = _DTYPES.get(body[0]) or (np.dtype(body[0]) if _is_str_dtype(body[0])
                                              else None)
            if dtype is None:
                raise bad(field, f"unknown dtype {body[0]!r}")
            value = self._dec(body[1], field, depth + 1)
            if dtype.kind != "U" and isinstance(value, str) or dtype.kind == "U" and \
                    not isinstance(value, str):
                raise bad(field, f"a {dtype} scalar holds {value!r}")
            try:
                return _exact_scalar(dtype, value)
            except (TypeError, ValueError, OverflowError):
                raise bad(field, f"{value!r} is not a {dtype} value") from None
        if tag == "$array":
            return self._array(body, field)
        if tag == "$objects":
            if not isinstance(body, dict) or set(body) != {"dtype", "shape", "values"}:
                raise bad(field, "$objects must hold dtype, shape and values")
            shape = _shape(body["shape"], field)
            values = body["values"]
            if not isinstance(values, list) or len(values) != math.prod(shape):
                raise bad(field, f"{math.prod(shape)} values expected")
            values = [self._dec(x, field, depth + 1) for x in values]
            if body["dtype"] == "object":
                out = np.empty(len(values), dtype=object)
                out[:] = values
            elif isinstance(body["dtype"], str) and _is_str_dtype(body["dtype"]):
                if not all(isinstance(x, str) for x in values):
                    raise bad(field, "a text array holds other values")
                out = np.array(values, dtype=body["dtype"]) if values else \
                    np.empty(0, dtype=body["dtype"])
            else:
                raise bad(field, f"unknown dtype {body['dtype']!r}")
            return out.reshape(shape)
        if tag == "$random_state":
            state = self._dec(body, field, depth + 1)
            rs = np.random.RandomState()
            try:
                rs.set_state(state)
            except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
                raise bad(field, f"not a random generator's state: {exc}") from None
            return rs
        raise bad(field, f"unknown tag {str(tag)[:40]!r}")

    def _array(self, spec, field):
        if not isinstance(spec, dict) or not isinstance(spec.get("dtype"), str):
            raise bad(field, "$array must hold dtype and shape")
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise bad(field, f"unsupported dtype {spec['dtype'][:20]!r}")
        shape = _shape(spec.get("shape"), field)
        count = math.prod(shape)
        if count * dtype.itemsize > self.limit:
            raise bad(field, f"claims {count} values, more than the file holds")
        if self.mode == "binary":
            if set(spec) != {"dtype", "shape", "member"}:
                raise bad(field, "$array must hold dtype, shape and member")
            raw = self.members.get(spec["member"]) if isinstance(spec["member"], str) else None
            if raw is None:
                raise bad(field, f"no member {str(spec['member'])[:40]!r} in the file")
            if len(raw) != count * dtype.itemsize:
                raise bad(field, f"member holds {len(raw)} bytes, the shape needs "
                                  f"{count * dtype.itemsize}")
            return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        if set(spec) != {"dtype", "shape", "data"}:
            raise bad(field, "$array must hold dtype, shape and data")
        data = spec["data"]
        if not isinstance(data, list) or len(data) != count:
            raise bad(field, f"data must be a list of {count} values")
        return _list_to_array(data, dtype, field).reshape(shape)


def _is_str_dtype(s):
    return len(s) < 12 and s[:2] == "<U" and s[2:].isdigit()


def _exact_scalar(dtype, value):
    out = dtype.type(value)
    if dtype.kind in "iub" and out.item() != value:
        raise ValueError
    return out


def _shape(shape, field):
    if not (isinstance(shape, list) and len(shape) <= 4 and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise bad(field, f"shape must be a list of at most 4 integers >= 0, got "
                          f"{str(shape)[:60]}")
    return tuple(shape)


def _list_to_array(data, dtype, field):
    """A JSON list of numbers as an array of ``dtype``, nothing converted silently."""
    if dtype.kind == "f":
        try:
            if all(type(x) is float or type(x) is int for x in data):
                return np.array(data, dtype=np.float64).astype(dtype)
            return np.array([_token_float(x, field) for x in data]).astype(dtype)
        except OverflowError:
            raise bad(field, "a number beyond float64's range") from None
    if dtype.kind == "b":
        if not all(type(x) is bool for x in data):
            raise bad(field, "expected true or false values")
        return np.array(data, dtype=bool)
    if not all(type(x) is int for x in data):
        raise bad(field, f"expected integers ({dtype})")
    info = np.iinfo(dtype)
    if data and (min(data) < info.min or max(data) > info.max):
        raise bad(field, f"a value outside the range of {dtype}")
    return np.array(data, dtype=dtype)
