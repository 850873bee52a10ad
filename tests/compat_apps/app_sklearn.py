"""scikit-learn models converted by sklearn-onnx and run with onnxruntime as sklearn-onnx's
tutorials show: a classifier whose probabilities come back as a list of dicts (ZipMap: a
sequence of maps), the same as columns and as a plain tensor, tree ensembles, a pipeline with
string columns, a text pipeline with string tensors and ORT's contrib tokenizer, a string
label encoder, k-means scores, and a few outputs asked for by name. Run by
tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``: the models are
trained the same way in both processes, and the output must be identical."""

import numpy as np
import onnxruntime as rt
from skl2onnx import to_onnx
from skl2onnx.common.data_types import FloatTensorType, Int64TensorType, StringTensorType
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelEncoder, OneHotEncoder, StandardScaler


def show(value):
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}:{value.tolist()!r}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):  # ZipMap: the key order is part of what is returned
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in value.items()) + "}"
    return repr(value)


def session(onx):
    sess = rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    for arg in sess.get_inputs() + sess.get_outputs():
        print(" ", arg.name, arg.type, arg.shape)
    return sess


def report(name, outputs):
    print(name, "->", " | ".join(show(v) for v in outputs))


X, y = load_iris(return_X_y=True)
X = X.astype(np.float32)
X_train, X_test = X[::2], X[1::2][::6]  # 13 rows of all three species
y_train = y[::2]

# a classifier: label and ZipMap probabilities (list of {class: probability})
clf = LogisticRegression(max_iter=500).fit(X_train, y_train)
print("logistic regression")
sess = session(to_onnx(clf, X_train[:1]))
report("zipmap", sess.run(None, {sess.get_inputs()[0].name: X_test}))
report("label only", sess.run([sess.get_outputs()[0].name], {"X": X_test[:3]}))
report("one row", sess.run(None, {"X": X_test[:1]}))

# string class labels: a string label tensor and a sequence of map(string, float)
named = LogisticRegression(max_iter=500).fit(X_train, load_iris().target_names[y_train])
print("string labels")
sess = session(to_onnx(named, X_train[:1]))
report("names", sess.run(None, {"X": X_test[::3]}))

# the same with probabilities as one tensor, and as one output per class
for zipmap in (False, "columns"):
    print("zipmap", zipmap)
    sess = session(to_onnx(clf, X_train[:1], options={id(clf): {"zipmap": zipmap}}))
    report("probabilities", sess.run(None, {"X": X_test[:4]}))

# tree ensembles (ai.onnx.ml TreeEnsembleClassifier/Regressor)
gbc = GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=0).fit(X_train,
                                                                               y_train)
print("gradient boosting")
sess = session(to_onnx(gbc, X_train[:1], options={id(gbc): {"zipmap": False}}))
report("gbc", sess.run(None, {"X": X_test}))
rfr = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X_train[:, :3],
                                                                           X_train[:, 3])
print("random forest regressor")
sess = session(to_onnx(rfr, X_train[:1, :3]))
report("rfr", sess.run(None, {"X": X_test[:, :3]}))

# a pipeline over a string column and numeric columns: one input per column
rng = np.random.default_rng(0)
colours = np.array(["red", "green", "blue", "red", "blue", "green", "red", "green"] * 4)
sizes = rng.normal(size=(32, 2)).astype(np.float32)
target = (colours == "red").astype(np.int64) ^ (sizes[:, 0] > 0).astype(np.int64)
import pandas as pd  # noqa: E402 - sklearn's ColumnTransformer is fed a DataFrame

frame = pd.DataFrame({"colour": colours, "a": sizes[:, 0], "b": sizes[:, 1]})
pipe = Pipeline([
    ("prep", ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore"), ["colour"]),
                                ("scale", StandardScaler(), ["a", "b"])])),
    ("clf", LogisticRegression()),
]).fit(frame, target)
print("column pipeline")
sess = session(to_onnx(pipe, initial_types=[("colour", StringTensorType([None, 1])),
                                            ("a", FloatTensorType([None, 1])),
                                            ("b", FloatTensorType([None, 1]))]))
feeds = {"colour": np.array([["red"], ["blue"], ["purple"], ["green"]], dtype=object),
         "a": sizes[:4, :1], "b": sizes[:4, 1:]}
report("pipeline", sess.run(None, feeds))

# text: TfidfVectorizer (StringNormalizer, ORT's Tokenizer, TfIdfVectorizer) and naive Bayes
texts = ["the cat sat on the mat", "dogs and cats living together", "a stock market report",
         "market prices fell today", "the dog barked at the cat", "shares and stocks rallied"]
topics = np.array([0, 0, 1, 1, 0, 1])
queries = np.array([["the cat and the dog"], ["stock prices"], ["Market REPORT today"], [""]])
for lowercase in (False, True):
    text_pipe = Pipeline([("tfidf", TfidfVectorizer(lowercase=lowercase)),
                          ("nb", MultinomialNB())]).fit(texts, topics)
    print("text pipeline, lowercase", lowercase)
    try:  # lowercase: ORT's StringNormalizer needs the en_US.UTF-8 locale, which a machine
        # may lack: then both bindings must raise the same error
        sess = session(to_onnx(text_pipe, initial_types=[("text", StringTensorType([None, 1]))],
                               options={id(text_pipe.steps[-1][1]): {"zipmap": False}}))
        report("text", sess.run(None, {"text": queries}))
    except Exception as err:  # noqa: BLE001 - printed: the same in both
        print("error", type(err).__module__, type(err).__name__, err)

# a string label encoder, and k-means
enc = LabelEncoder().fit(["paris", "tokyo", "amsterdam", "tokyo"])
print("label encoder")
sess = session(to_onnx(enc, initial_types=[("city", StringTensorType([None]))]))
report("encoded", sess.run(None, {"city": np.array(["tokyo", "paris", "amsterdam"])}))
km = KMeans(n_clusters=3, n_init=2, random_state=0).fit(X_train)
print("k-means")
sess = session(to_onnx(km, X_train[:1]))
report("clusters", sess.run(None, {"X": X_test[:5]}))
ids = np.arange(6, dtype=np.int64).reshape(3, 2)
counter = LogisticRegression().fit(ids, [0, 1, 0])
print("int64 input")
sess = session(to_onnx(counter, initial_types=[("X", Int64TensorType([None, 2]))]))
report("ints", sess.run(None, {"X": ids}))
