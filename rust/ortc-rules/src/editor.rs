//! The model editor (`GetModelEditorApi`, ORT 1.22+): attributes, value infos, nodes, graphs and
//! models built in code, and sessions made from a model ([`Session::from_model`]).
//!
//! Ownership moves as it does in ORT, and here it moves by value, so nothing given away can be
//! released or used again:
//!
//! * a successful `CreateNode` takes the attributes it is given (it copies each into the node,
//!   releases the caller's and sets the caller's array entries to NULL: check
//!   editor.create-node-takes-attributes; releasing one again is a double free that crashes,
//!   life.op-attr-release-after-create-node, life.op-attr-release-after-add-node): [`Node::new`]
//!   takes its [`OpAttr`]s by value;
//! * `SetGraphInputs`/`SetGraphOutputs` give the value infos to the graph:
//!   [`Graph::set_inputs`]/[`Graph::set_outputs`] take their [`ValueInfo`]s by value;
//! * `AddNodeToGraph` gives the node to the graph: [`Graph::add_node`] takes the [`Node`];
//! * `AddGraphToModel` gives the graph to the model: [`Model::new`] and [`Model::set_graph`] take
//!   the [`Graph`];
//! * `AddInitializerToGraph` takes the `OrtValue` on success (ORT's documentation: the caller
//!   must not release it afterwards; check life.value-release-after-add-initializer: a release
//!   after a successful call crashes the process): [`Graph::add_initializer`] takes the
//!   [`Value`], and gives it back to `Drop` when ORT refused it.
//!
//! The rules table lists these transfers as data, with who owns the argument after a failed
//! call and the evidence: [`crate::rules::TRANSFERS`].
//!
//! Where ORT sets a caller's array entry to NULL as it takes it, what is left non-NULL after the
//! call is still the caller's and is released here. Where it takes a single pointer and fails:
//! `AddInitializerToGraph` and `AddGraphToModel` return every error before taking it, so the
//! caller's is released here (`AddGraphToModel` refuses a second graph from ONNX Runtime 1.27.0:
//! check editor.add-graph-twice-refused); `AddNodeToGraph`'s node is not released again (older
//! sources could fail inside the push that already owned it): a leak is the safe side of an
//! ownership the C reference does not state. A node added twice (1.22.1-1.26.0 take it twice,
//! and crash when the graph is released: check editor.add-node-twice-refused) cannot be
//! written here: `add_node` moves the node.
//!
//! Every type here is Send and Sync per its row (check send.model-editor: value infos, a node
//! and a graph made on one thread are read and assembled on another, and two threads create
//! sessions from one model at once): getters take `&self`, the `Set*`/`Add*` calls that change a
//! graph or a model take `&mut self`, and what they take is moved.
//!
//! The sub-table is not declared by the project's headers: its first slots are declared below
//! in ABI order (ORT appends to it and never reorders it; its layout is fixed since ORT 1.21).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use crate::api::{api, c_string, Api};
use crate::typeinfo::TypeInfo;
use crate::value::Value;
use crate::{sys, Error, Result};

type Status = *mut sys::OrtStatus;

/// The first 15 slots of `OrtModelEditorApi`, in ABI order (what this crate calls; the table has
/// more after them). Read through the `editor!` macro.
#[repr(C)]
#[allow(non_snake_case, dead_code)]
pub(crate) struct EditorTable {
    pub CreateTensorTypeInfo: Option<unsafe extern "C" fn(*const sys::OrtTensorTypeAndShapeInfo, *mut *mut sys::OrtTypeInfo) -> Status>,
    CreateSparseTensorTypeInfo: Option<unsafe extern "C" fn()>,
    CreateMapTypeInfo: Option<unsafe extern "C" fn()>,
    CreateSequenceTypeInfo: Option<unsafe extern "C" fn()>,
    CreateOptionalTypeInfo: Option<unsafe extern "C" fn()>,
    pub CreateValueInfo: Option<unsafe extern "C" fn(*const c_char, *const sys::OrtTypeInfo, *mut *mut sys::OrtValueInfo) -> Status>,
    pub CreateNode: Option<
        unsafe extern "C" fn(
            *const c_char,
            *const c_char,
            *const c_char,
            *const *const c_char,
            usize,
            *const *const c_char,
            usize,
            *mut *mut sys::OrtOpAttr,
            usize,
            *mut *mut sys::OrtNode,
        ) -> Status,
    >,
    pub CreateGraph: Option<unsafe extern "C" fn(*mut *mut sys::OrtGraph) -> Status>,
    pub SetGraphInputs: Option<unsafe extern "C" fn(*mut sys::OrtGraph, *mut *mut sys::OrtValueInfo, usize) -> Status>,
    pub SetGraphOutputs: Option<unsafe extern "C" fn(*mut sys::OrtGraph, *mut *mut sys::OrtValueInfo, usize) -> Status>,
    pub AddInitializerToGraph: Option<unsafe extern "C" fn(*mut sys::OrtGraph, *const c_char, *mut sys::OrtValue, bool) -> Status>,
    pub AddNodeToGraph: Option<unsafe extern "C" fn(*mut sys::OrtGraph, *mut sys::OrtNode) -> Status>,
    pub CreateModel: Option<unsafe extern "C" fn(*const *const c_char, *const c_int, usize, *mut *mut sys::OrtModel) -> Status>,
    pub AddGraphToModel: Option<unsafe extern "C" fn(*mut sys::OrtModel, *mut sys::OrtGraph) -> Status>,
    pub CreateSessionFromModel: Option<
        unsafe extern "C" fn(*const sys::OrtEnv, *const sys::OrtModel, *const sys::OrtSessionOptions, *mut *mut sys::OrtSession) -> Status,
    >,
}

/// The model editor's table of the loaded library (`GetModelEditorApi`, API 22), or
/// `Error::NotSupported` on an older table.
pub(crate) fn table(api: &Api) -> Result<&'static EditorTable> {
    let get = slot!(api, GetModelEditorApi)?;
    let p = unsafe { get() };
    if p.is_null() {
        return Err(Error::NotSupported { slot: "GetModelEditorApi", since: sys::since::GetModelEditorApi, version: api.version });
    }
    // a static table inside the library, never written: see EditorTable
    Ok(unsafe { &*(p as *const EditorTable) })
}

fn c_strings(what: &str, items: &[&str]) -> Result<Vec<CString>> {
    items.iter().map(|s| c_string(what, s)).collect()
}

fn read_c_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

// -- OpAttr ------------------------------------------------------------------------------------

/// A node attribute made with `CreateOpAttr`: the caller's until given to [`Node::new`], which
/// takes it by value (a successful `CreateNode` releases it: releasing it again would be a
/// double free). Read-only: every getter is shared (`&self`). Send and Sync.
pub struct OpAttr {
    ptr: NonNull<sys::OrtOpAttr>,
    api: &'static Api,
}

impl OpAttr {
    fn create(name: &str, data: *const c_void, len: usize, kind: sys::OrtOpAttrType) -> Result<OpAttr> {
        let api = api()?;
        let n = c_string("attribute name", name)?;
        let len = c_int::try_from(len).map_err(|_| Error::Invalid(format!("attribute {name}: {len} elements is too many")))?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateOpAttr(n.as_ptr(), data, len, kind, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateOpAttr returned NULL".into()))?;
        Ok(OpAttr { ptr, api })
    }

    /// A float attribute (`CreateOpAttr`, `ORT_OP_ATTR_FLOAT`).
    pub fn float(name: &str, value: f32) -> Result<OpAttr> {
        OpAttr::create(name, &value as *const f32 as *const c_void, 1, sys::ORT_OP_ATTR_FLOAT)
    }

    /// An integer attribute (`CreateOpAttr`, `ORT_OP_ATTR_INT`).
    pub fn int(name: &str, value: i64) -> Result<OpAttr> {
        OpAttr::create(name, &value as *const i64 as *const c_void, 1, sys::ORT_OP_ATTR_INT)
    }

    /// A list of integers (`CreateOpAttr`, `ORT_OP_ATTR_INTS`).
    pub fn ints(name: &str, values: &[i64]) -> Result<OpAttr> {
        OpAttr::create(name, values.as_ptr() as *const c_void, values.len(), sys::ORT_OP_ATTR_INTS)
    }

    /// A string attribute (`CreateOpAttr`, `ORT_OP_ATTR_STRING`; ORT copies it). The value goes
    /// to ORT NUL-terminated, with its length: older libraries ignore the length and read the
    /// string up to its NUL (ORT 1.16's `CreateOpAttr` builds the attribute from the pointer
    /// alone, <https://github.com/microsoft/onnxruntime/blob/v1.16.3/onnxruntime/core/session/standalone_op_invoker.cc>),
    /// which a `&str` does not have; a value with a NUL inside is refused.
    pub fn string(name: &str, value: &str) -> Result<OpAttr> {
        let v = c_string("attribute value", value)?;
        OpAttr::create(name, v.as_ptr() as *const c_void, value.len(), sys::ORT_OP_ATTR_STRING)
    }

    /// The attribute's name (shared: `OpAttr_GetName`, API 23).
    pub fn name(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, OpAttr_GetName(self.ptr.as_ptr(), &mut s))?;
        Ok(read_c_string(s))
    }

    /// The attribute's type, `sys::ORT_OP_ATTR_*` (shared: `OpAttr_GetType`, API 23).
    pub fn attr_type(&self) -> Result<sys::OrtOpAttrType> {
        let mut t = 0;
        ort!(self.api, OpAttr_GetType(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// A float attribute's value (shared: `ReadOpAttr`).
    pub fn read_float(&self) -> Result<f32> {
        let mut v = 0f32;
        let mut size = 0usize;
        ort!(self.api, ReadOpAttr(self.ptr.as_ptr(), sys::ORT_OP_ATTR_FLOAT, &mut v as *mut f32 as *mut c_void,
                                  std::mem::size_of::<f32>(), &mut size))?;
        Ok(v)
    }

    /// A string attribute's value (shared: `ReadOpAttr`, API 17).
    pub fn read_string(&self) -> Result<String> {
        let mut size = 0usize;
        // the first call asks for the size (and fails for a buffer too small)
        let _ = ort!(self.api, ReadOpAttr(self.ptr.as_ptr(), sys::ORT_OP_ATTR_STRING, std::ptr::null_mut(), 0, &mut size));
        let mut buf = vec![0u8; size];
        ort!(self.api, ReadOpAttr(self.ptr.as_ptr(), sys::ORT_OP_ATTR_STRING, buf.as_mut_ptr() as *mut c_void, buf.len(), &mut size))?;
        buf.truncate(size.min(buf.len()));
        // some versions count a terminating NUL
        while buf.last() == Some(&0) {
            buf.pop();
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Give the attribute away: its `Drop` will not run.
    fn into_raw(self) -> *mut sys::OrtOpAttr {
        ManuallyDrop::new(self).ptr.as_ptr()
    }
}

impl Drop for OpAttr {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseOpAttr) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

// -- ValueInfo ---------------------------------------------------------------------------------

/// A graph input or output made with `CreateValueInfo`: the caller's until given to
/// [`Graph::set_inputs`]/[`Graph::set_outputs`], which take it by value (the graph owns it from
/// then on). Read-only: every getter is shared (`&self`). Send and Sync.
pub struct ValueInfo {
    ptr: NonNull<sys::OrtValueInfo>,
    api: &'static Api,
}

impl ValueInfo {
    /// A tensor of `element_type` (`sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_*`) and shape `dims`
    /// (-1 for a free dimension) named `name`: `CreateTensorTypeAndShapeInfo`, its setters,
    /// `CreateTensorTypeInfo` and `CreateValueInfo`, which copies the type info (released here).
    pub fn tensor(name: &str, element_type: sys::ONNXTensorElementDataType, dims: &[i64]) -> Result<ValueInfo> {
        let api = api()?;
        let n = c_string("value name", name)?;
        let type_info = tensor_type_info(api, element_type, dims)?;
        let mut p = std::ptr::null_mut();
        editor!(api, CreateValueInfo(n.as_ptr(), type_info.ptr.as_ptr() as *const _, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateValueInfo returned NULL".into()))?;
        Ok(ValueInfo { ptr, api })
    }

    /// The value's name (shared: `GetValueInfoName`).
    pub fn name(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, GetValueInfoName(self.ptr.as_ptr(), &mut s))?;
        Ok(read_c_string(s))
    }

    /// The tensor's element type and shape (shared: `GetValueInfoTypeInfo`, whose type info is
    /// borrowed from the value info and never released, then `CastTypeInfoToTensorInfo` and the
    /// shape getters).
    pub fn element_type_and_shape(&self) -> Result<(sys::ONNXTensorElementDataType, Vec<i64>)> {
        let api = self.api;
        let mut ti: *const sys::OrtTypeInfo = std::ptr::null();
        ort!(api, GetValueInfoTypeInfo(self.ptr.as_ptr(), &mut ti))?;
        let mut info: *const sys::OrtTensorTypeAndShapeInfo = std::ptr::null();
        ort!(api, CastTypeInfoToTensorInfo(ti, &mut info))?;
        if info.is_null() {
            return Err(Error::Invalid("the value info is not a tensor".into()));
        }
        crate::typeinfo::element_type_and_dims(api, info)
    }

    fn into_raw(self) -> *mut sys::OrtValueInfo {
        ManuallyDrop::new(self).ptr.as_ptr()
    }
}

impl Drop for ValueInfo {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseValueInfo) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

/// An owned tensor TypeInfo (the shape info it is made from is released here).
fn tensor_type_info(api: &'static Api, element_type: sys::ONNXTensorElementDataType, dims: &[i64]) -> Result<TypeInfo> {
    let mut shape = std::ptr::null_mut();
    ort!(api, CreateTensorTypeAndShapeInfo(&mut shape))?;
    let make = || -> Result<TypeInfo> {
        ort!(api, SetTensorElementType(shape, element_type))?;
        ort!(api, SetDimensions(shape, dims.as_ptr(), dims.len()))?;
        let mut ti = std::ptr::null_mut();
        editor!(api, CreateTensorTypeInfo(shape as *const _, &mut ti))?;
        unsafe { TypeInfo::from_raw(api, ti) }
    };
    let out = make();
    if let Ok(f) = slot!(api, ReleaseTensorTypeAndShapeInfo) {
        unsafe { f(shape) }
    }
    out
}

// -- Node --------------------------------------------------------------------------------------

/// A node made with `CreateNode`: the caller's until given to [`Graph::add_node`], which takes
/// it by value (the graph owns it from then on: releasing it after would be a double free).
/// Read-only: every getter is shared (`&self`). Send and Sync.
pub struct Node {
    ptr: NonNull<sys::OrtNode>,
    api: &'static Api,
}

impl Node {
    /// A node running `op_type` of `domain` ("" for ONNX) named `name`, from the values named
    /// `inputs` to those named `outputs` (`CreateNode`). The attributes are moved in: a
    /// successful `CreateNode` releases each and sets its array entry to NULL; one whose entry
    /// is still set after the call (a failed call, or a library that only copies) is still the
    /// caller's and is released here, once.
    pub fn new(op_type: &str, domain: &str, name: &str, inputs: &[&str], outputs: &[&str], attributes: Vec<OpAttr>) -> Result<Node> {
        let api = api()?;
        let (op, dom, n) = (c_string("operator", op_type)?, c_string("domain", domain)?, c_string("node name", name)?);
        let ins = c_strings("input name", inputs)?;
        let outs = c_strings("output name", outputs)?;
        let in_ptrs: Vec<*const c_char> = ins.iter().map(|s| s.as_ptr()).collect();
        let out_ptrs: Vec<*const c_char> = outs.iter().map(|s| s.as_ptr()).collect();
        // given away from here: the entries left non-NULL come back below
        let mut attrs: Vec<*mut sys::OrtOpAttr> = attributes.into_iter().map(OpAttr::into_raw).collect();
        let attrs_ptr = if attrs.is_empty() { std::ptr::null_mut() } else { attrs.as_mut_ptr() };
        let mut p = std::ptr::null_mut();
        let status = editor!(api, CreateNode(op.as_ptr(), dom.as_ptr(), n.as_ptr(), in_ptrs.as_ptr(), in_ptrs.len(),
                                             out_ptrs.as_ptr(), out_ptrs.len(), attrs_ptr, attrs.len(), &mut p));
        for left in attrs.into_iter().filter_map(NonNull::new) {
            drop(OpAttr { ptr: left, api });
        }
        status?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateNode returned NULL".into()))?;
        Ok(Node { ptr, api })
    }

    /// The node's name (shared: `Node_GetName`, API 23).
    pub fn name(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, Node_GetName(self.ptr.as_ptr(), &mut s))?;
        Ok(read_c_string(s))
    }

    /// The operator's type (shared: `Node_GetOperatorType`, API 23).
    pub fn operator_type(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, Node_GetOperatorType(self.ptr.as_ptr(), &mut s))?;
        Ok(read_c_string(s))
    }

    fn into_raw(self) -> *mut sys::OrtNode {
        ManuallyDrop::new(self).ptr.as_ptr()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseNode) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

// -- Graph -------------------------------------------------------------------------------------

/// A graph being built (`CreateGraph`): the caller's until given to a [`Model`] ([`Model::new`],
/// [`Model::set_graph`]), which takes it by value. What is added to it is moved in and belongs
/// to it. Changing it is exclusive (`&mut self`). Send and Sync.
pub struct Graph {
    ptr: NonNull<sys::OrtGraph>,
    api: &'static Api,
}

impl Graph {
    /// An empty graph (`CreateGraph`).
    pub fn new() -> Result<Graph> {
        let api = api()?;
        let mut p = std::ptr::null_mut();
        editor!(api, CreateGraph(&mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateGraph returned NULL".into()))?;
        Ok(Graph { ptr, api })
    }

    /// The graph's inputs (exclusive: `SetGraphInputs`, which replaces any set before). The value
    /// infos are moved into the graph; ORT sets each array entry to NULL as it takes it.
    pub fn set_inputs(&mut self, inputs: Vec<ValueInfo>) -> Result<()> {
        let api = self.api;
        let mut raw: Vec<*mut sys::OrtValueInfo> = inputs.into_iter().map(ValueInfo::into_raw).collect();
        let status = editor!(api, SetGraphInputs(self.ptr.as_ptr(), raw.as_mut_ptr(), raw.len()));
        release_left_value_infos(api, raw);
        status
    }

    /// The graph's outputs (exclusive: `SetGraphOutputs`), moved in as for
    /// [`set_inputs`](Graph::set_inputs).
    pub fn set_outputs(&mut self, outputs: Vec<ValueInfo>) -> Result<()> {
        let api = self.api;
        let mut raw: Vec<*mut sys::OrtValueInfo> = outputs.into_iter().map(ValueInfo::into_raw).collect();
        let status = editor!(api, SetGraphOutputs(self.ptr.as_ptr(), raw.as_mut_ptr(), raw.len()));
        release_left_value_infos(api, raw);
        status
    }

    /// Add a node (exclusive: `AddNodeToGraph`). The node is moved into the graph, which owns it
    /// from then on.
    pub fn add_node(&mut self, node: Node) -> Result<()> {
        let raw = node.into_raw();
        // on an error the node is not released again: ORT fails here only inside the push that
        // already owns it
        editor!(self.api, AddNodeToGraph(self.ptr.as_ptr(), raw))
    }

    /// Add an initializer named `name` (exclusive: `AddInitializerToGraph`), its data held by the
    /// graph (`data_is_external` false). The value is moved in: ORT takes it on success, and it
    /// is released here when ORT refused it. Only a value that owns its data (`Value<'static>`)
    /// and is freed through ORT's default allocator: a value of a session's allocator keeps that
    /// session alive, which the graph would not do.
    pub fn add_initializer(&mut self, name: &str, value: Value<'static>) -> Result<()> {
        if value.has_allocator() {
            return Err(Error::Invalid(format!(
                "initializer {name}: a value from a session's allocator keeps that session alive; \
                 use Value::from_slice_copy"
            )));
        }
        let n = c_string("initializer name", name)?;
        let api = self.api;
        let raw = value.into_raw();
        let status = editor!(api, AddInitializerToGraph(self.ptr.as_ptr(), n.as_ptr(), raw, false));
        if status.is_err() {
            // refused: still the caller's
            drop(unsafe { Value::from_raw(api, raw) });
        }
        status
    }

    fn into_raw(self) -> *mut sys::OrtGraph {
        ManuallyDrop::new(self).ptr.as_ptr()
    }
}

fn release_left_value_infos(api: &'static Api, raw: Vec<*mut sys::OrtValueInfo>) {
    for left in raw.into_iter().filter_map(NonNull::new) {
        drop(ValueInfo { ptr: left, api });
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseGraph) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

// -- Model -------------------------------------------------------------------------------------

/// A model built with the model editor (`CreateModel`), always with a graph: [`Model::new`]
/// takes one, so `CreateSessionFromModel` never meets a model without. Sessions are made from it
/// through `&self` ([`Session::from_model`], any number of threads at once) and do not need it
/// afterwards; replacing its graph is exclusive (`&mut self`). Send and Sync.
///
/// [`Session::from_model`]: crate::Session::from_model
pub struct Model {
    pub(crate) ptr: NonNull<sys::OrtModel>,
    api: &'static Api,
}

impl Model {
    /// A model importing `opsets` (domain, version: `("", 17)` for ONNX opset 17) whose graph is
    /// `graph` (`CreateModel`, then `AddGraphToModel`, which takes the graph).
    pub fn new(opsets: &[(&str, i32)], graph: Graph) -> Result<Model> {
        let api = api()?;
        let domains: Vec<CString> = opsets.iter().map(|(d, _)| c_string("opset domain", d)).collect::<Result<_>>()?;
        let domain_ptrs: Vec<*const c_char> = domains.iter().map(|d| d.as_ptr()).collect();
        let versions: Vec<c_int> = opsets.iter().map(|(_, v)| *v as c_int).collect();
        let mut p = std::ptr::null_mut();
        editor!(api, CreateModel(domain_ptrs.as_ptr(), versions.as_ptr(), opsets.len(), &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateModel returned NULL".into()))?;
        let model = Model { ptr, api }; // released on an error below
        let raw = graph.into_raw();
        editor!(api, AddGraphToModel(model.ptr.as_ptr(), raw))?;
        Ok(model)
    }

    /// Give the model a graph (exclusive: `AddGraphToModel`); the graph is moved in. A model
    /// made by [`Model::new`] has one already: from ONNX Runtime 1.27.0 ORT refuses a second,
    /// which is then still the caller's and is released here; 1.22.1-1.26.0 take it in place of
    /// the first (check editor.add-graph-twice-refused). Every error ORT returns here comes
    /// before it takes the graph (the rules table's transfers, AddGraphToModel).
    pub fn set_graph(&mut self, graph: Graph) -> Result<()> {
        let api = self.api;
        let raw = graph.into_raw();
        let status = editor!(api, AddGraphToModel(self.ptr.as_ptr(), raw));
        if status.is_err() {
            // refused: still the caller's
            if let Some(ptr) = NonNull::new(raw) {
                drop(Graph { ptr, api });
            }
        }
        status
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseModel) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}
