irdl.dialect @cplx {
  irdl.operation @norm {
    %0 = irdl.is i32
    irdl.operands(arg: %0)
    irdl.results(res: %0)
  }
}
